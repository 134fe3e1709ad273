"""The scenario's own record of a run (demo-scenario's scenario.json) as
the trace analysis reads it: the origin of its clock, its stalls, the RT
datagrams it listed and the freeze probes' late wake-ups. Where the RT
client is a loadgen run of its own (a test host's RT client unit, around
demo-scenario --watch), its JSON gives the datagrams instead
(with_client). Every field is checked against the file's record
(report.formats.Scenario, report.formats.Loadgen): a results directory
from elsewhere gives an error naming the field (tracefile.TraceError),
never a traceback.
"""
import os
from dataclasses import dataclass, replace

from report import formats
from report.files import DataError

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


def _params(params, path):
    """The parameters the trace analysis reads, checked: scenario.json's
    record holds them as an object of any values."""
    for key, t in (("relay_prio", int), ("ticker_prio", int), ("ticker_lead_us", float),
                   ("late_ms", float)):
        if params.get(key) is not None:
            formats.check_value(t, params[key], path, f"params.{key}")
    return params


def _probe(p):
    listed = None if p.listed is None else tuple(Freeze(p.cpu, f.due_s, f.woke_s) for f in p.listed)
    return Probe(p.cpu, p.prio, p.freezes, p.in_stalls or 0, p.min_ms, p.max_ms, listed)


def read(results):
    """The Scenario of a guest's results directory (RESULTS/scenario.json),
    checked against its record (report.formats.Scenario)."""
    path = os.path.join(results, "scenario.json")
    scen = _read(formats.Scenario, path)
    try:
        params = _params(scen.params, path)
    except DataError as e:
        raise TraceError(str(e)[:300])
    if not scen.t0_mono_ns:
        raise TraceError(f"{path}: no t0_mono_ns (a scenario from before the trace)")
    if "stalls" not in formats.raw(scen):
        raise TraceError(f"{path}: stalls: missing")
    tick = scen.ticker or formats.Ticker(enabled=False)
    stalls = tuple(Stall(i, s.start_s, s.until_s, s.length_ms, s.lift_s) for i, s in enumerate(scen.stalls))
    return Scenario(scen.t0_mono_ns / 1e9, params, stalls,
                    tuple(Listed(s.due_s, s.echo_s) for s in tick.listed or ()),
                    tick.list_over_us, tick.listed_complete,
                    tuple(_probe(p) for p in tick.freeze_probes or ()))


def _read(cls, path):
    """The CLS record in the JSON file PATH, or TraceError naming it."""
    try:
        if os.path.getsize(path) > MAX_BYTES:
            raise TraceError(f"{path}: more than {MAX_BYTES >> 20} MiB: not a scenario's record")
        return formats.read(cls, path)
    except OSError as e:
        raise TraceError(f"{path}: {e.strerror or e}")
    except DataError as e:
        raise TraceError(str(e)[:300])


def with_client(scen, path):
    """SCEN with its RT client a loadgen run (PATH, its JSON, which loadgen
    --list-over-us wrote): that run's slow datagrams are the listed ones,
    from their intended send to their reply, on the results' clock, and
    the client's task is loadgen."""
    lst = _read(formats.Loadgen, path).listed
    if lst is None:
        raise TraceError(f"{path}: no listed datagrams (a loadgen run without --list-over-us?)")
    # To the nanosecond, the clocks' own resolution.
    listed = tuple(Listed(round(d.intended_mono_s - scen.t0, 9), round(d.reply_mono_s - scen.t0, 9))
                   for d in lst.datagrams)
    return replace(scen, listed=listed, list_over_us=lst.over_us, listed_complete=lst.complete,
                   client="loadgen")
