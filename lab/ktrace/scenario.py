"""The scenario's own record of a run (demo-scenario's scenario.json) as
the trace analysis reads it: the origin of its clock, its stalls, the RT
datagrams it listed and the freeze probes' late wake-ups. Where the RT
client is a loadgen run of its own (a test host's RT client unit, around
demo-scenario --watch), its JSON gives the datagrams instead (with_client). Every field is
checked as it is read: a results directory from elsewhere gives an error
naming the field (tracefile.TraceError), never a traceback.
"""
import json
import math
import os
from dataclasses import dataclass, replace

from .tracefile import TraceError

# A scenario.json is some hundred kilobytes (its listed datagrams and
# freezes are capped by demo-scenario).
MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class Stall:
    """A stall the watchdog recorded, in seconds of the results' clock
    (since t0): from start_s to end_s (its end, else the quota's restore,
    else start plus its length)."""
    index: int
    start_s: float
    end_s: float
    length_ms: float | None
    lift_s: float | None


@dataclass(frozen=True)
class Listed:
    """An RT datagram the ticker listed (slower than list_over_us): due at
    its slot, echoed back."""
    due_s: float
    echo_s: float


@dataclass(frozen=True)
class Freeze:
    """A freeze probe's wake-up on cpu that came limit or more late: due at
    its slot, woke at woke_s."""
    cpu: int
    due_s: float
    woke_s: float

    @property
    def late_ms(self):
        return round((self.woke_s - self.due_s) * 1000, 3)


@dataclass(frozen=True)
class Probe:
    """One freeze probe: its CPU and SCHED_FIFO priority (None: a scenario
    that did not say; the probes run at 90), how many freezes it counted
    (in_stalls of them inside a stall), its limit, and each freeze (None:
    a scenario from before they were listed; fewer than counted when its
    list filled)."""
    cpu: int
    prio: int | None
    count: int
    in_stalls: int
    min_ms: float | None
    max_ms: float | None
    freezes: tuple | None


@dataclass(frozen=True)
class Scenario:
    t0: float                   # CLOCK_MONOTONIC seconds of the results' 0
    params: dict
    stalls: tuple
    listed: tuple
    list_over_us: float | None
    listed_complete: bool | None
    probes: tuple
    # The RT client's task name: the ticker's thread, or loadgen
    # (with_client); its SCHED_FIFO priority is params' ticker_prio.
    client: str = "demo-scenario"


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _field(obj, key, where, kind="number", need=True):
    """obj[key] checked: a finite number ("number"), an int ("int"), a bool;
    None when absent and not needed."""
    v = obj.get(key)
    if v is None and not need:
        return None
    ok = {"number": _number, "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
          "bool": lambda x: isinstance(x, bool)}[kind](v)
    if not ok:
        raise TraceError(f"{where}.{key}: expected a{'n' if kind == 'int' else ''} {kind}, got {str(v)[:40]!r}")
    return v


def _records(v, name):
    """v, a list of records (dicts), [] when None; else TraceError naming
    name and the first item that is not one."""
    if v is None:
        return []
    if not isinstance(v, list):
        raise TraceError(f"{name}: expected a list of records")
    for i, x in enumerate(v):
        if not isinstance(x, dict):
            raise TraceError(f"{name}[{i}]: expected a record, got {str(x)[:40]!r}")
    return v


def _stall(i, s, where):
    w = f"{where}[{i}]"
    start = _field(s, "start_s", w)
    end = next((s[k] for k in ("end_s", "restore_s") if _number(s.get(k)) and s[k] >= 0), None)
    length = _field(s, "length_ms", w, need=False)
    if end is None:
        end = start + (length or 0) / 1000
    return Stall(i, start, end, length, _field(s, "lift_s", w, need=False))


def _probe(i, p, where):
    w = f"{where}[{i}]"
    cpu = _field(p, "cpu", w, "int")
    listed = None
    if p.get("listed") is not None:
        listed = tuple(Freeze(cpu, _field(f, "due_s", f"{w}.listed[{j}]"),
                              _field(f, "woke_s", f"{w}.listed[{j}]"))
                       for j, f in enumerate(_records(p["listed"], f"{w}.listed")))
    return Probe(cpu, _field(p, "prio", w, "int", need=False), _field(p, "freezes", w, "int", need=False) or 0,
                 _field(p, "in_stalls", w, "int", need=False) or 0, _field(p, "min_ms", w, need=False),
                 _field(p, "max_ms", w, need=False), listed)


def read(results):
    """The Scenario of a guest's results directory (RESULTS/scenario.json)."""
    path = os.path.join(results, "scenario.json")
    scen = _load(path)
    if not isinstance(scen, dict) or "params" not in scen:
        raise TraceError(f"{path}: params: missing (not a scenario's record)")
    if not _field(scen, "t0_mono_ns", path, "int", need=False):
        raise TraceError(f"{path}: no t0_mono_ns (a scenario from before the trace)")
    if not isinstance(scen.get("stalls"), list) or not isinstance(scen.get("params"), dict):
        raise TraceError(f"{path}: stalls or params is missing or of the wrong type")
    params = scen["params"]
    for key, kind in (("relay_prio", "int"), ("ticker_prio", "int"), ("ticker_lead_us", "number"),
                      ("late_ms", "number")):
        _field(params, key, f"{path}: params", kind, need=False)
    stalls = tuple(_stall(i, s, f"{path}: stalls")
                   for i, s in enumerate(_records(scen["stalls"], f"{path}: stalls")))
    ticker = scen.get("ticker") or {}
    if not isinstance(ticker, dict):
        raise TraceError(f"{path}: ticker: expected a record")
    where = f"{path}: ticker"
    listed = tuple(Listed(_field(s, "due_s", f"{where}.listed[{i}]"), _field(s, "echo_s", f"{where}.listed[{i}]"))
                   for i, s in enumerate(_records(ticker.get("listed"), f"{where}.listed")))
    probes = tuple(_probe(i, p, f"{where}.freeze_probes")
                   for i, p in enumerate(_records(ticker.get("freeze_probes"), f"{where}.freeze_probes")))
    return Scenario(scen["t0_mono_ns"] / 1e9, params, stalls, listed,
                    _field(ticker, "list_over_us", where, need=False),
                    _field(ticker, "listed_complete", where, "bool", need=False), probes)


def _load(path):
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise TraceError(f"{path}: more than {MAX_BYTES >> 20} MiB: not a scenario's record")
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise TraceError(f"{path}: {str(e)[:200] or type(e).__name__}")


def with_client(scen, path):
    """SCEN with its RT client a loadgen run (PATH, its JSON, which loadgen
    --list-over-us wrote): that run's slow datagrams are the listed ones,
    from their intended send to their reply, on the results' clock, and
    the client's task is loadgen."""
    run = _load(path)
    if not isinstance(run, dict) or not isinstance(run.get("listed"), dict):
        raise TraceError(f"{path}: no listed datagrams (a loadgen run without --list-over-us?)")
    where = f"{path}: listed"
    lst = run["listed"]
    # To the nanosecond, the clocks' own resolution.
    listed = tuple(Listed(round(_field(d, "intended_mono_s", f"{where}.datagrams[{i}]") - scen.t0, 9),
                          round(_field(d, "reply_mono_s", f"{where}.datagrams[{i}]") - scen.t0, 9))
                   for i, d in enumerate(_records(lst.get("datagrams"), f"{where}.datagrams")))
    return replace(scen, listed=listed, list_over_us=_field(lst, "over_us", where),
                   listed_complete=_field(lst, "complete", where, "bool"), client="loadgen")
